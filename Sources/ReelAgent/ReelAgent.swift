// ReelAgent: see issue 4 (being built).
