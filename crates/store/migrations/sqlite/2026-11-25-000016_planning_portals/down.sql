DROP TABLE planning_portals;
