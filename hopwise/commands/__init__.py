"""One module per subcommand; each defines register(subparsers) and sets args.handler."""
