"""Writes of the wiki: the compiler, entities, people pages, sections, summaries; import each
name from the module that defines it."""
