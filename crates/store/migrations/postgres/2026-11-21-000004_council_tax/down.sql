DROP TABLE council_tax;
