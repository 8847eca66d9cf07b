"""Golden tests: values typed by hand from the Microsoft doc pages (../shared/seeds/),
the tables of ../shared/spec/definitions.md and the kit header's mask comments.

Nothing here is produced by the package's generator or layout code: the point is to
catch a mistyped width or offset in the one layout table, which a check whose two
sides both come from that table cannot see.
"""
