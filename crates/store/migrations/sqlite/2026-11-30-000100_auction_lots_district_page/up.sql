-- A district's lots page in its order (newest auction first, ties by lot key) read from the
-- index without sorting the district's lots (`GET /v1/auctions/lots?postcode_district=`).
DROP INDEX auction_lots_district;
CREATE INDEX auction_lots_district ON auction_lots (district, auction_date, lot_key);
