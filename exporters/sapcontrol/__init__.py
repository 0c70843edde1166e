"""Reading SAP's sapstartsrv (SAPControl SOAP): the schema, the client and its settings."""
