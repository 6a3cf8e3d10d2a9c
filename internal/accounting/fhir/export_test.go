package fhir

// What the external tests (package fhir_test) read of the package.
const BALPPatientRead = balpPatientRead
