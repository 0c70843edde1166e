"""The landscape model answering as SAP's sapstartsrv: one SAPControl endpoint per instance."""
