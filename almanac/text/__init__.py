"""Reading text, in English and Chinese, without the database or an LLM: the one place for it.

- `normalize`: one spelling of blanks, Unicode and numbers; language-neutral sizes.
- `sentences`: the sentence splitter (and where a chunk may be cut), speaker turns.
- `filler`: greetings, thanks, acknowledgements, reminders.
- `amounts`: numbers with their currency, magnitude, unit and period.
- `dates`: days, relative dates, quarters, resolved against a base date.
- `names`: people, companies, ids; a pronoun replaced by its name.
- `roles`: who owns, leads or runs something.
- `facts`: the facts that tell two close sentences apart.
- `stated`: the one "same fact?" rule: a stated value (what it is of, the value), same thing, same value.
- `claims`: the one value a memory states, of its subject (its key), a correction, its kind.
- `statements`: the values a wiki line states, of its page (amounts, terms, dates, owners, states).
- `duplicates`: the near-duplicate test of two texts.
- `summaries`: does a summary still say what an original said.
- `extractive`: the extractive summary within a token budget.
"""
