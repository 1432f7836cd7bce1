DROP TABLE companies;
DROP TABLE title_proprietors;
DROP TABLE titles;
