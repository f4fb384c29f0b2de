import Foundation
import VecSync

extension DemoCommand {
    /// A message of the sample chat history.
    private struct Sample {
        var id: String
        var thread: String
        var user: String
        var topic: String
        var content: String
        var phase: MessagePhase
        var status: ApprovalStatus
    }

    private static let samples: [Sample] = [
        Sample(
            id: "m01", thread: "japan", user: "ana", topic: "temples",
            content: "Fushimi Inari at dawn, before the crowds arrive", phase: .experience, status: .approved),
        Sample(
            id: "m02", thread: "japan", user: "ben", topic: "ramen",
            content: "Ichiran ramen in Shibuya is open all night", phase: .experience, status: .approved),
        Sample(
            id: "m03", thread: "japan", user: "ana", topic: "temples",
            content: "Kinkaku-ji, the golden pavilion, glows in the late afternoon", phase: .experience,
            status: .approved),
        Sample(
            id: "m04", thread: "japan", user: "ben", topic: "trains",
            content: "The JR pass pays off if we take the Shinkansen twice", phase: .action, status: .approved),
        Sample(
            id: "m05", thread: "japan", user: "ana", topic: "temples",
            content: "Skip the combined temple pass, single tickets are cheaper", phase: .experience, status: .refused),
        Sample(
            id: "m06", thread: "japan", user: "ben", topic: "temples",
            content: "Ryoan-ji's rock garden is worth a quiet hour", phase: .experience, status: .approved),
        Sample(
            id: "m07", thread: "japan", user: "ana", topic: "ramen",
            content: "Okonomiyaki and takoyaki along Dotonbori in Osaka", phase: .experience, status: .approved),
        Sample(
            id: "m08", thread: "japan", user: "ben", topic: "trains",
            content: "Book Nozomi seat E for the view of Mount Fuji", phase: .action, status: .pending),
        Sample(
            id: "m09", thread: "japan", user: "ana", topic: "temples",
            content: "Kiyomizu-dera's wooden stage looks over all of Kyoto", phase: .experience, status: .pending),
        Sample(
            id: "m10", thread: "dinner", user: "ana", topic: "cooking",
            content: "Miso-glazed aubergine, twenty minutes in the oven", phase: .experience, status: .approved),
        Sample(
            id: "m11", thread: "dinner", user: "ben", topic: "cooking",
            content: "Homemade udon: flour, water, salt, and stamping on the dough", phase: .experience,
            status: .approved),
        Sample(
            id: "m12", thread: "dinner", user: "ana", topic: "ramen",
            content: "A quick shoyu ramen broth from dashi and soy", phase: .experience, status: .approved),
    ]

    func runMessages(_ database: VecSyncDatabase, clock: DemoClock) throws {
        let embedder = DemoEmbedder(dimensions: 1536, spread: 0.8)
        let messages = try MessageStore(database, dimensions: 1536, clock: { clock.now() })
        Self.heading("Messages: a chat app with semantic recall (libSQL schema, vector_top_k, 1536-d)")

        try messages.createThread(id: "japan", title: "Trip to Japan", k0: 1, alpha: 1.5, m: 1)
        try messages.createThread(id: "dinner", title: "Dinner ideas", k0: 1, alpha: 1.5, m: 1)
        try messages.createThread(id: "guide", title: "Kyoto guidebook notes", k0: 1, alpha: 1.5, m: 1)
        for sample in Self.samples {
            try messages.addMessage(
                id: sample.id, threadId: sample.thread, userId: sample.user, content: sample.content,
                embedding: embedder.embed(sample.content, topic: sample.topic), phase: sample.phase)
            if sample.status != .pending { try messages.setApprovalStatus(sample.status, ofMessage: sample.id) }
        }
        // A guidebook thread full of temple notes, closer to any temple question than the
        // trip's own messages: the case where a join after vector_top_k loses rows.
        for i in 1...40 {
            let text = "Guidebook entry \(i): opening hours and fees of a Kyoto temple"
            try messages.addMessage(
                id: "g\(i)", threadId: "guide", userId: "guide", content: text,
                embedding: embedder.embed(text, topic: "temples", and: "temples", weight: 0.6), phase: .action)
        }
        print("3 threads, \(Self.samples.count + 40) messages; the trip thread has 9, 7 of them judged.")

        let question = "Which temples in Kyoto should we see?"
        let query = embedder.embed(question, topic: "temples")
        print("\nQuestion in “Trip to Japan”: \(question)")

        let naive = try database.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM vector_top_k('messages_embedding_idx', ?, 3) AS v
                    JOIN messages AS m ON m.rowid = v.id
                    WHERE m.thread_id = 'japan' AND m.approval_status = 'approved'
                    """, arguments: [query]) ?? 0
        }
        print("  vector_top_k(…, 3) joined and filtered afterwards (the usual query) finds \(naive) of 3:")
        print("  the 3 nearest messages of the whole database are guidebook notes.")
        print("  MessageStore.similar(to:inThread:approvedOnly:limit: 3) finds exactly 3, nearest first:")
        for (message, distance) in try messages.similar(to: query, inThread: "japan", approvedOnly: true, limit: 3) {
            print("    \(Self.distance(distance))  [\(message.approvalStatus.rawValue)] \(message.content)")
        }
        print("  Including messages not yet approved (limit 4):")
        for (message, distance) in try messages.similar(to: query, inThread: "japan", limit: 4) {
            print("    \(Self.distance(distance))  [\(message.approvalStatus.rawValue)] \(message.content)")
        }
        let food = embedder.embed("Where do we eat noodles tonight?", topic: "ramen")
        print("\nQuestion: Where do we eat noodles tonight? (every thread, nearest 3)")
        for (message, distance) in try messages.similar(to: food, limit: 3) {
            print("    \(Self.distance(distance))  [\(message.threadId)] \(message.content)")
        }

        if let thread = try messages.thread(id: "japan") {
            let p = thread.parameters
            print(
                "\n“Trip to Japan” parameters after 6 approvals and 1 refusal "
                    + "(approve: k0 +0.05, α +0.02, m −0.01; refuse: k0 −0.08, α −0.03, m +0.02):")
            print(
                String(
                    format: "    k0 %.2f   α %.2f   m %.2f   (started at k0 1.00, α 1.50, m 1.00; %d history rows)",
                    p.k0, p.alpha, p.m, try messages.parameterHistory(ofThread: "japan").count))
        }
        print("  Latest experiences with the parameters in force when they were written:")
        for experience in try messages.experiences(inThread: "japan", limit: 3) {
            let p = experience.priorParameters
            print(String(format: "    k0 %.2f α %.2f m %.2f  ", p.k0, p.alpha, p.m) + experience.message.content)
        }
    }
}
