extension Duration {
    /// Whole milliseconds (truncated), for the database's and libpq's millisecond figures.
    var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
