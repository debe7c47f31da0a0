"""Where a module's time goes: hotspot measurements and reports."""
