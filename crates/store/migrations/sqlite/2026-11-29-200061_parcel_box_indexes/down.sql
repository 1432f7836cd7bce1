DROP INDEX land_parcels_width_idx;
DROP INDEX land_parcels_min_x_idx;
