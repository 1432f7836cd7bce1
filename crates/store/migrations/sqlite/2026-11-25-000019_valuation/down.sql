DROP INDEX valuation_accuracy_month_idx;
DROP TABLE valuation_accuracy;
DROP TABLE valuation_vintages;
DROP INDEX valuations_district_idx;
DROP TABLE valuations;
