/// Fair share among the jobs of one priority: each job gets a **turn** when it is planned (its
/// tasks become claimable), and claims take jobs in turn order (`ClaimPolicy.precedes`: after
/// priority, before age). A job on its own takes the turn at the head of its priority's queue:
/// the lowest turn of the jobs there that accept claims (0 when there are none), so it comes
/// right after the jobs already at the head. A batch's rows are one **unit**: each row takes
/// the turn after its batch's previous row, and never one before the head. So a batch of
/// 10,000 rows is spread over 10,000 turns instead of standing before everything submitted
/// after it, two batches interleave row by row, and jobs submitted one by one still run in
/// the order they came (they share the head's turn; the older goes first).
///
/// The one rule the store (`Statements.assignClaimTurn`) and the in-memory model follow.
public enum ClaimTurns {
    /// The head of a priority's queue: the lowest turn among `turns` (those of the jobs of
    /// that priority that accept claims), or 0 when there are none.
    public static func head(_ turns: some Sequence<Int64>) -> Int64 { turns.min() ?? 0 }

    /// The turn of a job planned now. `batchNext` is its batch's next turn (what the previous
    /// row left; 0 for a batch's first), nil for a job of its own. - Returns: the job's turn,
    /// and its batch's next turn after it (nil for a job of its own).
    public static func assign(head: Int64, batchNext: Int64?) -> (turn: Int64, batchNext: Int64?) {
        guard let batchNext else { return (head, nil) }
        let turn = max(batchNext, head)
        return (turn, turn + 1)
    }
}
