// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/tuple_and_get_tuple_element.mlir, func @get_tuple_element
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>) {
  %val0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %tmp0 = stablehlo.constant dense<3> : tensor<i64>
  %val1 = stablehlo.tuple %tmp0 : tuple<tensor<i64>>
  %operand = stablehlo.tuple %val0, %val1 : tuple<tensor<2xf64>, tuple<tensor<i64>>>
  %result0 = stablehlo.get_tuple_element %operand[0] : (tuple<tensor<2xf64>, tuple<tensor<i64>>>) -> tensor<2xf64>
  %tmp1 = stablehlo.get_tuple_element %operand[1] : (tuple<tensor<2xf64>, tuple<tensor<i64>>>) -> tuple<tensor<i64>>
  %result1 = stablehlo.get_tuple_element %tmp1[0] : (tuple<tensor<i64>>) -> tensor<i64>
  %expected0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %expected1 = stablehlo.constant dense<3> : tensor<i64>
  func.return %result0, %expected0, %result1, %expected1 : tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>
}
