DROP TABLE brma_areas;
DROP TABLE lha_rates;
