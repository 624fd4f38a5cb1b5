// Typed argument sets: interning (one id per distinct set, from any thread), the table a capture
// gives back, and reading shapes out of an IntTree.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/args.h"

namespace perfprof {
namespace {

ArgSet with(ArgKey key, int64_t value) { return {{{key, value}}}; }

TEST(ArgSetTable, OneIdPerDistinctSet) {
  ArgSetTable table;
  const ArgSetId a = table.intern(with(ArgKey::Stream, 1));
  EXPECT_NE(a, kNoArgs);
  EXPECT_EQ(table.intern(with(ArgKey::Stream, 1)), a);
  EXPECT_NE(table.intern(with(ArgKey::Stream, 2)), a);
  EXPECT_NE(table.intern(with(ArgKey::GcGeneration, 1)), a);
  EXPECT_EQ(table.intern(ArgSet{}), kNoArgs);
  // The same pairs in another order are another set: writers keep the order.
  ArgSet ab = with(ArgKey::Stream, 1), ba = with(ArgKey::GcGeneration, 2);
  ab.args.push_back(ba.args[0]);
  ba.args.push_back(with(ArgKey::Stream, 1).args[0]);
  EXPECT_NE(table.intern(ab), table.intern(ba));
  // Values of another type under the same key differ too.
  EXPECT_NE(table.intern({{{ArgKey::Domain, StringId{1}}}}), table.intern({{{ArgKey::Domain, int64_t{1}}}}));
}

TEST(ArgSetTable, SnapshotKeepsTheUsedSetsAtTheirIds) {
  ArgSetTable table;
  const ArgSetId a = table.intern(with(ArgKey::Stream, 1));
  const ArgSetId b = table.intern(with(ArgKey::Stream, 2));
  std::vector<bool> used(index_of(b) + 1, false);
  used[index_of(b)] = true;
  const std::vector<ArgSet> snapshot = table.snapshot(used);
  ASSERT_EQ(snapshot.size(), index_of(b) + 1);
  EXPECT_TRUE(snapshot[index_of(a)].empty());
  EXPECT_EQ(snapshot[index_of(b)], with(ArgKey::Stream, 2));

  ArgSetTable rebuilt(table.take());  // as a trace builder takes a capture's sets
  EXPECT_EQ(rebuilt.intern(with(ArgKey::Stream, 2)), b);
  EXPECT_THROW(ArgSetTable(std::vector<ArgSet>{with(ArgKey::Stream, 1)}), std::invalid_argument);
}

TEST(ArgSetTable, ThreadsInterningTheSameSetsAgreeOnTheirIds) {
  ArgSetTable table;
  constexpr int kThreads = 4, kSets = 2000;
  std::vector<std::vector<ArgSetId>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSets; ++i) ids[t].push_back(table.intern(with(ArgKey::Stream, (i * 7 + t) % kSets)));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kSets; ++i) {
    EXPECT_EQ(table.intern(with(ArgKey::Stream, i)), table.intern(with(ArgKey::Stream, i)));
  }
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kSets; ++i) EXPECT_EQ(ids[t][i], table.intern(with(ArgKey::Stream, (i * 7 + t) % kSets)));
  }
  EXPECT_EQ(table.take().size(), size_t{kSets} + 1);
}

TEST(ArgKeys, EveryKeyHasOneSpec) {
  for (const ArgKeySpec& spec : kArgKeys) {
    EXPECT_EQ(spec_of(spec.key), &spec);
    EXPECT_FALSE(spec.name.empty());
  }
  EXPECT_EQ(spec_of(static_cast<ArgKey>(0)), nullptr);
  EXPECT_EQ(spec_of(static_cast<ArgKey>(255)), nullptr);
}

TEST(IntTree, ListsOfIntsAreReadPerItem) {
  // [[8, 64], [[2], [3]], 5, []]
  const IntTree tree{{4, true}, {2, true}, {8, false}, {64, false}, {2, true}, {1, true}, {2, false},
                     {1, true}, {3, false}, {5, false}, {0, true}};
  EXPECT_EQ(int_lists_of(tree), (std::vector<std::vector<int64_t>>{{8, 64}, {}, {}, {}}));
  EXPECT_TRUE(int_lists_of(IntTree{}).empty());
  EXPECT_TRUE(int_lists_of(IntTree{{3, false}}).empty());
  // A list claiming more items than the tree holds ends with it.
  EXPECT_EQ(int_lists_of(IntTree{{5, true}, {1, true}, {7, false}}), (std::vector<std::vector<int64_t>>{{7}}));
}

}  // namespace
}  // namespace perfprof
