"""ProtoJSON of the A2A protos, 1.0 (`lf.a2a.v1`) and 0.3 (`a2a.v1`): one reader and
writer for both; where the protos differ, tables say how (`spelling`, and the version
packages' operation tables)."""
