"""Writes of documents: upload and delete (`documents`), reading their text (`reading`), the
files under the data directory (`files`), the memories a skill found in them (`clauses`)."""
