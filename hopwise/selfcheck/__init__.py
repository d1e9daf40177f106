"""How well Hopwise reads a deployment's own documents (issue 47): reading checks per
document, kept for the admin, and the stated-answer threshold chosen on them."""
