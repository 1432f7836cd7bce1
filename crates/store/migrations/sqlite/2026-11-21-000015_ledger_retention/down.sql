DROP TABLE ledger_daily;
