"""The LangGraph state machine and everything it reasons with."""
