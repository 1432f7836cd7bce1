DROP TABLE sourcing_features;
