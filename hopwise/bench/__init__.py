"""Benchmarks behind `hopwise bench`: retrieval, ingestion and graph (each module has run(args))."""
