package rollup

// SQLString is sqlString, for the black-box tests.
var SQLString = sqlString
