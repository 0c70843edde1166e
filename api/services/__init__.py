"""The logic the API's routes and the command line share. Services take the store and the
settings, return what the API answers (described in api/schemas.py) and refuse with a
`ServiceError`, which the API turns into its HTTP status and the CLI into an error line."""
