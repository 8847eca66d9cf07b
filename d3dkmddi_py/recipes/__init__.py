"""Recipes: the bulk decoder inside other engines (each needs its own optional extra)."""
