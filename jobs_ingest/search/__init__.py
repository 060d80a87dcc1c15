"""Elasticsearch: documents from facts, the indices, similar-failure search, the search APIs."""
