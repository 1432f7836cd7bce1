DROP INDEX auction_lots_address_key;
DROP INDEX auction_lots_property;
DROP INDEX auction_lots_uprn;
DROP INDEX auction_lots_district;
DROP INDEX auction_lots_date;
DROP TABLE auction_lots;
