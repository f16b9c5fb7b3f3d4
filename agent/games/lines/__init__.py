"""Color Lines (five in a row): rules, search, a simulated phone and its reader."""
