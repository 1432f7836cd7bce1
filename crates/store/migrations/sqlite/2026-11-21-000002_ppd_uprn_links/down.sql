DROP INDEX price_paid_uprn_date_idx;
DROP TABLE ppd_uprn_links;
