DROP TABLE layer_coverage;
DROP TABLE spatial_features;
