DROP INDEX saved_searches_account_created;
DROP INDEX saved_searches_account_name;
DROP TABLE saved_searches;
