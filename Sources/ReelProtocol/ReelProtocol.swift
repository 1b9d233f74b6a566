// ReelProtocol: the line protocol of proto/ (issue 4).
