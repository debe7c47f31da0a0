"""No domain knowledge: errors, files, flag files, TOML, rendering, finding and running programs."""
