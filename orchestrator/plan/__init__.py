"""Planning: a study file parsed and checked (Study), its cells grouped into arrays by resource
shape (Plan, plan.json), and cells named on the command line. Imports no other role."""
