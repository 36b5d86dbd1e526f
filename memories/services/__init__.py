"""Writes of the memories app (docs/style.md, Where code goes), one module per job; import each
name from the module that defines it.

Modules depend one way: `rows` (row primitives) ← `topics` ← `revocation` ← `compression`;
`revocation` ← `memories` ← `purge`, `extraction`; `scopes` and `common` below them all;
`sessions`, `touches` (recall hits) and `users` beside them.
"""
