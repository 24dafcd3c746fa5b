"""Other frameworks' spellings over hookgrad's machinery."""
