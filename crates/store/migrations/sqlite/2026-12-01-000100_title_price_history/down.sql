ALTER TABLE commercial_capital_index DROP COLUMN own_weight;
DROP INDEX title_price_history_title_idx;
DROP TABLE title_price_history;
