/// A job's budget (docs/farm.md, "Budgets"): an amount of money, in the currency of the farm's
/// agent prices, or of agent-hours (agent time at any price). Written `12.50` (money) or
/// `3.5h` (agent-hours): a bare number is money, a number with `h` is hours; nothing else is
/// accepted, so neither can be mistaken for the other.
public struct JobBudget: Hashable, Sendable, CustomStringConvertible {
    public enum Unit: String, Hashable, Sendable, Codable {
        /// In the currency of `--cost-per-hour` and the coordinator's price table.
        case money
        /// Agent time, whatever its price.
        case agentHours = "agent_hours"
    }

    public var amount: Double
    public var unit: Unit

    public init(amount: Double, unit: Unit) {
        self.amount = amount
        self.unit = unit
    }

    /// What a bad budget is told: the two forms accepted.
    public static let syntax = "a positive amount of money like 12.50, or of agent-hours like 3.5h"

    /// Parses `12.50` or `3.5h` (also `3.5agent-hours`); nil for anything else, or an amount
    /// that is not positive and finite.
    public init?(parsing text: String) {
        var number = Substring(text.lowercased())
        var unit = Unit.money
        for suffix in ["agent-hours", "agent-hour", "h"] where number.hasSuffix(suffix) {
            number = number.dropLast(suffix.count)
            unit = .agentHours
            break
        }
        // Digits and at most one point: no exponent, sign, `nan` or `inf`.
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), number.filter({ $0 == "." }).count <= 1,
              let amount = Double(number), amount > 0, amount.isFinite else { return nil }
        self.init(amount: amount, unit: unit)
    }

    /// As `init(parsing:)` reads it: `12.5` or `3.5h` (plain decimals, up to 9 places: never an
    /// exponent, which it would refuse).
    public var description: String {
        let number = Self.decimal(amount)
        return unit == .money ? number : number + "h"
    }

    static func decimal(_ value: Double) -> String {
        let billionths = (value * 1e9).rounded()
        guard billionths.magnitude < 9e18 else { return String(Int64(value.rounded())) }
        let n = Int64(billionths), whole = n / 1_000_000_000, fraction = n % 1_000_000_000
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// The budget's amount in the unit `spent` is measured in: money, or agent-milliseconds.
    public var limit: Double { unit == .money ? amount : amount * 3_600_000 }

    /// The share of the budget at which a job stops getting new chunks (its running ones finish).
    public static let pauseShare = 0.9

    /// What the rule does to a job that has spent `spent` (money, or agent-milliseconds) of a
    /// budget of `limit` in the same unit: nothing below 90 %, pause from 90 %, and from 100 %
    /// also hand its running chunks back.
    public static func verdict(spent: Double, limit: Double) -> Verdict {
        if spent >= limit { return .stop }
        if spent >= limit * pauseShare { return .pause }
        return .within
    }

    public enum Verdict: String, Hashable, Sendable {
        /// Under 90 %: the job runs (a job paused by its budget resumes).
        case within
        /// 90 % or more: no new chunks; running ones finish.
        case pause
        /// 100 % or more: paused, and its running chunks are handed back to the queue.
        case stop
    }
}

/// Why a job is paused (`jobs.pause_reason`).
public enum PauseReason: String, Hashable, Sendable, Codable {
    /// `reel pause` or the console.
    case `operator`
    /// Its budget reached 90 % (`JobBudget.verdict`); `reel budget` raises it.
    case budget
}
