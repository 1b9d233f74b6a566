import Testing
import ReelScheduling
import ReelThreadTesting

/// Prices of agents (`AgentPricing`): an agent's own, else the coordinator's table by class.
@Suite("Agent pricing", .blocking)
struct AgentPricingTests {
    @Test func anAgentsOwnPriceWinsElseTheLongestClassThatBeginsItsNameElseTheDefault() throws {
        let table = try AgentPricing(parsing: ["0.40", "spot-=0.12", "spot-gpu-=1.5"])
        #expect(table.slotCostPerHour(agentName: "spot-gpu-3/2", stated: nil, slots: 2) == 0.75)
        #expect(table.slotCostPerHour(agentName: "spot-7", stated: nil, slots: 1) == 0.12)
        #expect(table.slotCostPerHour(agentName: "render-01", stated: nil, slots: 4) == 0.10)
        #expect(table.slotCostPerHour(agentName: "spot-7", stated: 2, slots: 4) == 0.5, "its own price, over its slots")
        let classesOnly = try AgentPricing(parsing: ["gpu-=2"])
        #expect(classesOnly.slotCostPerHour(agentName: "render-01", stated: nil, slots: 1) == nil)
        #expect(AgentPricing().slotCostPerHour(agentName: "render-01", stated: nil, slots: 1) == nil)
        #expect(AgentPricing().slotCostPerHour(agentName: "render-01", stated: 0, slots: 1) == 0, "free is a price")
    }

    @Test(arguments: ["", "abc", "gpu-=", "=1", "gpu-=-1", "-1", "1e3", "gpu=1=2x", "1000000000"])
    func aBadEntrySaysWhatToWrite(_ value: String) {
        #expect(throws: AgentPricingError.self) { try AgentPricing(parsing: [value]) }
    }

    @Test func aClassOrTheDefaultPricedTwiceIsRefused() {
        #expect(throws: AgentPricingError("class gpu- is priced twice")) { try AgentPricing(parsing: ["gpu-=1", "gpu-=2"]) }
        #expect(throws: AgentPricingError.self) { try AgentPricing(parsing: ["1", "2"]) }
        do {
            _ = try AgentPricing(parsing: ["abc"])
        } catch {
            #expect(error.description.contains("CLASS=PRICE"))
        }
    }
}
