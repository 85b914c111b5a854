// tests/core/test_schema.cpp: parsing PyTorch schema strings.
#include <doctest/doctest.h>

#include "core/dispatch/function_schema.h"

namespace test_schema {  // Note [Test files in unity builds]

using namespace strata;

TEST_CASE("addmm's schema parses into names, types, defaults and kwarg-only marks") {
  const FunctionSchema s =
      FunctionSchema::parse("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  CHECK(s.name() == "addmm");
  CHECK(s.overload().empty());
  REQUIRE(s.arguments().size() == 5);
  CHECK(s.arguments()[1].name == "mat1");
  CHECK(s.arguments()[1].type.kind == SchemaType::Kind::Tensor);
  CHECK_FALSE(s.arguments()[2].kwarg_only);
  CHECK(s.arguments()[3].kwarg_only);
  CHECK(s.arguments()[3].type.kind == SchemaType::Kind::Scalar);
  CHECK(s.arguments()[4].default_text.value() == "1");
  CHECK(s.default_value(4).to_int() == 1);
  CHECK(s.argument_index("alpha") == 4);
  CHECK(s.argument_index("gamma") == -1);
  REQUIRE(s.returns().size() == 1);
  CHECK_FALSE(s.is_mutable());
}

TEST_CASE("overloads, alias annotations, lists, optionals and named returns parse") {
  const FunctionSchema add_ =
      FunctionSchema::parse("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  CHECK(add_.overload() == "Tensor");
  CHECK(add_.arguments()[0].type.alias == "a!");
  CHECK(add_.arguments()[0].type.is_write());
  CHECK(add_.is_mutable());
  CHECK(add_.arguments()[0].type.str() == "Tensor(a!)");

  const FunctionSchema sum = FunctionSchema::parse(
      "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  CHECK(sum.arguments()[1].type.list);
  CHECK(sum.arguments()[1].type.list_size == 1);
  CHECK(sum.arguments()[1].type.optional);
  CHECK(sum.arguments()[1].type.str() == "int[1]?");
  CHECK(sum.default_value(2).to_bool() == false);
  CHECK(sum.default_value(3).is_none());

  const FunctionSchema nll = FunctionSchema::parse(
      "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor "
      "output, Tensor total_weight)");
  REQUIRE(nll.returns().size() == 2);
  CHECK(nll.returns()[1].name == "total_weight");
  CHECK(nll.arguments()[4].type.kind == SchemaType::Kind::Int);

  const FunctionSchema exit_op = FunctionSchema::parse(
      "_record_function_exit._RecordFunction(__torch__.torch.classes.profiler._RecordFunction _0) -> ()");
  CHECK(exit_op.arguments()[0].type.kind == SchemaType::Kind::Custom);
  CHECK(exit_op.arguments()[0].type.custom == "__torch__.torch.classes.profiler._RecordFunction");
  CHECK(exit_op.returns().empty());

  const FunctionSchema randint = FunctionSchema::parse(
      "randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None) -> Tensor");
  CHECK(randint.default_value(2).to_scalar_type() == ScalarType::Int64);
  const FunctionSchema normal =
      FunctionSchema::parse("normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)");
  CHECK(normal.default_value(2).to_double() == 1.0);
  CHECK(normal.default_value(2).is_double());
}

TEST_CASE("malformed schemas are rejected with the position") {
  CHECK_THROWS_WITH_AS(FunctionSchema::parse("add(Tensor self"), "cannot parse schema 'add(Tensor self' at position 15: expected ','",
                       Error);
  CHECK_THROWS_WITH_AS(FunctionSchema::parse("add(Tensor self) Tensor"),
                       "cannot parse schema 'add(Tensor self) Tensor' at position 17: expected '-'", Error);
  CHECK_THROWS_WITH_AS(FunctionSchema::parse("(Tensor self) -> Tensor"),
                       "cannot parse schema '(Tensor self) -> Tensor' at position 0: expected a name", Error);
  const FunctionSchema s = FunctionSchema::parse("f(Tensor self) -> Tensor");
  CHECK_THROWS_WITH_AS(s.default_value(0), "f() missing required argument 'self'", Error);
}

}  // namespace test_schema
