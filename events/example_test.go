package events_test

import (
	"errors"
	"fmt"

	"github.com/lookup/persons/events"
)

func ExampleDecode() {
	body := []byte(`{
		"specversion": "1.0",
		"id": "4d2c9a51-0c55-4a4e-9d2e-2a3c0b1e7f10",
		"source": "urn:example:crm",
		"type": "persons.consumer.upserted.v1",
		"entityversion": 3,
		"data": {
			"consumer_id": "0B7E0F4E-3A1C-4C7E-9A52-7F3F2C1D9E01",
			"business_id": "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
			"first_name": "Ada",
			"last_name": "Lovelace"
		}
	}`)
	ev, err := events.Decode("persons.consumer.0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01", body)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := ev.Data.(events.Consumer)
	fmt.Println(ev.Type, ev.EntityVersion, c.ConsumerID, c.FirstName)

	// The same event on another consumer's subject is refused.
	_, err = events.Decode("persons.consumer.11111111-2222-4333-8444-555555555555", body)
	var ie *events.InvalidEventError
	if errors.As(err, &ie) {
		fmt.Println(ie.Field)
	}
	// Output:
	// persons.consumer.upserted.v1 3 0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01 Ada
	// subject
}

func ExampleEncode() {
	ev, err := events.NewEvent("urn:example:registry", 1, events.SignerDeleted{
		SignerID:   "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
		ConsumerID: "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := events.Encode(ev)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := events.Decode(ev.Subject(), body)
	fmt.Println(ev.Subject())
	fmt.Println(back.Type, err)
	// Output:
	// persons.authorized_signer.0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01.c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f
	// persons.authorized_signer.deleted.v1 <nil>
}
