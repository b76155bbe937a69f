package layout

// TempRE is the pattern of the temporary files SweepTemps removes.
var TempRE = tempRE
