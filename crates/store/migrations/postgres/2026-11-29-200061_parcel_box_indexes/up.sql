-- The land assembly's box query: parcels by their western edge, and the widest parcel's width
-- (the bound of that range) read off an index rather than a scan.
CREATE INDEX land_parcels_min_x_idx ON land_parcels (min_x);
CREATE INDEX land_parcels_width_idx ON land_parcels ((max_x - min_x));
