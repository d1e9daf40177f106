"""Fakes and stub servers shared by the tests. Never imported by product code."""
