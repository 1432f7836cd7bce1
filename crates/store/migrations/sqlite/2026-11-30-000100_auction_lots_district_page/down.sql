DROP INDEX auction_lots_district;
CREATE INDEX auction_lots_district ON auction_lots (district, auction_date);
