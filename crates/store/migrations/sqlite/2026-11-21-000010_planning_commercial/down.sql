DROP TABLE uarn_uprn_links;
DROP TABLE rating_list_entries;
DROP TABLE planning_coverage;
DROP TABLE planning_applications;
