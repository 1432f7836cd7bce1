DROP INDEX catalogue_areas_kind_idx;
DROP TABLE catalogue_areas;
DROP TABLE coverage_register;
