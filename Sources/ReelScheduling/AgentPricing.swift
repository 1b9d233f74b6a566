/// What agents cost an hour, for a job's cost (docs/farm.md, "Cost"). An agent states its own
/// price (`reel agent --cost-per-hour`, `CAPS cost=`); an agent that states none is priced by
/// the coordinator's table (`reel coordinator --cost-per-hour [CLASS=]PRICE`), by class: the
/// longest class that begins its name (`spot-` prices `spot-07` and `spot-07/2`), else the
/// table's default (an entry without a class), else nothing. A price is for the whole agent
/// process; each of its render slots (`CAPS threads=`, one task each at a time) costs its share.
public struct AgentPricing: Sendable, Hashable {
    /// One entry of the table: agents whose names begin with `agentClass` (empty: every agent)
    /// cost `costPerHour`.
    public struct Entry: Sendable, Hashable {
        public var agentClass: String
        public var costPerHour: Double
        public init(agentClass: String, costPerHour: Double) { self.agentClass = agentClass; self.costPerHour = costPerHour }
    }

    public private(set) var entries: [Entry]

    /// No table: agents that state no price cost nothing.
    public init() { entries = [] }

    /// - Throws: `AgentPricingError` for a negative or non-finite price or a class given twice.
    public init(_ entries: [Entry]) throws(AgentPricingError) {
        var seen: Set<String> = []
        for entry in entries {
            guard entry.costPerHour.isFinite, entry.costPerHour >= 0, entry.costPerHour < 1e9 else {
                throw AgentPricingError("a price an hour must be from 0 to 999999999, got \(entry.costPerHour)"
                                        + (entry.agentClass.isEmpty ? "" : " for \(entry.agentClass)"))
            }
            guard seen.insert(entry.agentClass).inserted else {
                throw AgentPricingError(entry.agentClass.isEmpty ? "more than one default price (an entry without CLASS=)"
                                                                 : "class \(entry.agentClass) is priced twice")
            }
        }
        self.entries = entries
    }

    /// Reads `--cost-per-hour` values: `PRICE` (the default) or `CLASS=PRICE`, like `0.40` or `gpu-=2.10`.
    public init(parsing values: [String]) throws(AgentPricingError) {
        var entries: [Entry] = []
        for value in values {
            let (agentClass, priceText): (String, Substring) = {
                guard let equals = value.lastIndex(of: "=") else { return ("", Substring(value)) }
                return (String(value[..<equals]), value[value.index(after: equals)...])
            }()
            guard let price = Double(priceText), !priceText.isEmpty, priceText.allSatisfy({ $0.isNumber || $0 == "." }) else {
                throw AgentPricingError("--cost-per-hour \(value): give PRICE or CLASS=PRICE, a price an hour such as 0.40 or gpu-=2.10")
            }
            if value.contains("="), agentClass.isEmpty {
                throw AgentPricingError("--cost-per-hour \(value): the class before = is empty (leave out CLASS= for the default price)")
            }
            entries.append(Entry(agentClass: agentClass, costPerHour: price))
        }
        try self.init(entries)
    }

    /// The price an hour of one render slot of agent `name` with `slots` slots: its own
    /// `stated` price, else the table's, divided among its slots; nil when neither has one.
    public func slotCostPerHour(agentName name: String, stated: Double?, slots: Int) -> Double? {
        guard let price = stated ?? tablePrice(agentName: name) else { return nil }
        return price / Double(max(1, slots))
    }

    /// The table's price for agent `name`: the longest class that begins it, else the default.
    public func tablePrice(agentName name: String) -> Double? {
        entries.filter { name.hasPrefix($0.agentClass) }.max { $0.agentClass.count < $1.agentClass.count }?.costPerHour
    }
}

/// A price table that cannot be used; the message says what to fix.
public struct AgentPricingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
