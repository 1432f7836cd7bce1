DROP TABLE commercial_stock;
