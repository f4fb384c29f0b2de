import Testing

@testable import VecSyncServer

/// The body budget charges bodies as they are read, keeps each space within its share, and
/// never lets bodies read in parts wait on each other for ever.
@Suite("Body budget")
struct BodyBudgetTests {
    @Test func aSpaceKeepsWithinItsShareAndOthersGoOn() async {
        let budget = BodyBudget(total: 100, spaceShare: 60)
        let first = await budget.open(space: 1)
        #expect(await budget.take(50, for: first, patience: .zero))
        let second = await budget.open(space: 1)
        #expect(!(await budget.take(20, for: second, patience: .milliseconds(30))))
        let other = await budget.open(space: 2)
        #expect(await budget.take(40, for: other, patience: .zero))
        await budget.close(first)
        #expect(await budget.take(20, for: second, patience: .zero))
        await budget.close(second)
        await budget.close(other)
        #expect(await budget.inUse == 0)
    }

    @Test func bodiesWaitingOnEachOtherAreLetThroughOldestFirst() async {
        let budget = BodyBudget(total: 100, spaceShare: 100)
        let older = await budget.open(space: 1)
        let younger = await budget.open(space: 2)
        #expect(await budget.take(60, for: older, patience: .zero))
        #expect(await budget.take(40, for: younger, patience: .zero))
        // Both need more and both hold part: neither would ever give back. The older one
        // goes past the budget; the younger one waits for it.
        async let youngerMore = budget.take(30, for: younger, patience: .milliseconds(200))
        async let olderMore = budget.take(30, for: older, patience: .seconds(5))
        #expect(await olderMore)
        #expect(!(await youngerMore))
        await budget.close(older)
        #expect(await budget.take(30, for: younger, patience: .zero))
        await budget.close(younger)
        #expect(await budget.inUse == 0)
    }

    @Test func aBodyThatDoesNotWaitIsNotOvertaken() async {
        let budget = BodyBudget(total: 100, spaceShare: 100)
        let reading = await budget.open(space: 1)
        #expect(await budget.take(90, for: reading, patience: .zero))
        // `reading` holds bytes and is not waiting: it will give them back, so no exemption.
        let waiting = await budget.open(space: 2)
        #expect(!(await budget.take(20, for: waiting, patience: .milliseconds(50))))
        #expect(await budget.inUse == 90)
        await budget.close(reading)
        await budget.close(waiting)
    }

    @Test func onePartLargerThanTheBudgetIsLetThroughAlone() async {
        let budget = BodyBudget(total: 100, spaceShare: 50)
        let body = await budget.open(space: 1)
        #expect(await budget.take(150, for: body, patience: .seconds(1)))
        #expect(await budget.inUse == 150)
        await budget.close(body)
        #expect(await budget.inUse == 0)
    }
}
