"""Parse -> chunk -> embed -> Milvus. The index schema lives here."""
